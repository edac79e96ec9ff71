"""Building blocks of the typed YAML schemas: a strict base model and unit types.

Every schema model forbids unknown keys, and every physical quantity is a
unit-typed field parsed by :mod:`simulator.units` into an SI float.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, BeforeValidator, ConfigDict

from ..units import UnitError, parse_quantity


class Strict(BaseModel):
    """Base of all schema models: unknown keys are errors, models are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _quantity(dimension: str):
    def parse(value: object) -> float:
        try:
            return parse_quantity(value, dimension)
        except UnitError as err:
            # pydantic turns ValueError into a located validation error.
            raise ValueError(str(err)) from None

    return BeforeValidator(parse)


Seconds = Annotated[float, _quantity("time")]
Hertz = Annotated[float, _quantity("frequency")]
Bytes = Annotated[float, _quantity("bytes")]
BytesPerSecond = Annotated[float, _quantity("bandwidth")]
Watts = Annotated[float, _quantity("power")]
Joules = Annotated[float, _quantity("energy")]
Volts = Annotated[float, _quantity("voltage")]
Farads = Annotated[float, _quantity("capacitance")]
JoulesPerByte = Annotated[float, _quantity("energy_per_byte")]
WattsPerKelvin = Annotated[float, _quantity("conductance")]
JoulesPerKelvin = Annotated[float, _quantity("heat_capacity")]
Kelvin = Annotated[float, _quantity("temperature_delta")]
Celsius = Annotated[float, _quantity("temperature")]
Fraction = Annotated[float, _quantity("dimensionless")]
