"""A stacked LSTM sequence classifier (Hochreiter and Schmidhuber, 1997).

One ``lstm`` kernel per layer runs the layer's time steps one after another
(a persistent LSTM kernel: the four gate products and the element-wise cell
update per step); the layers run one after another and a fully connected
classifier reads the last step's hidden state. The default (2 x 256 units,
32 steps) keeps each layer's weights (2 MiB in FP32) within a DSP board's
shared on-chip memory, so a layer reads them once, not once per step.
"""

from __future__ import annotations

from workloads.graph import Graph

from .base import MODELS, positive_int


@MODELS.register("lstm")
def lstm(input_size: int = 32, features: int = 256, hidden: int = 256, layers: int = 2,
         num_classes: int = 10) -> Graph:
    """Stacked LSTM: 2 x 256 units over 32 steps: 1.05 M parameters, 33.6 MMACs per sequence.

    Args:
        input_size: time steps (the sequence length).
        features: input features per step.
        hidden: hidden units per layer.
        layers: stacked LSTM layers.
        num_classes: classifier outputs (on the last hidden state).
    """
    seq_len = positive_int("input_size", input_size, "lstm")
    features = positive_int("features", features, "lstm")
    hidden = positive_int("hidden", hidden, "lstm")
    layers = positive_int("layers", layers, "lstm")
    num_classes = positive_int("num_classes", num_classes, "lstm")
    g = Graph("lstm", (features, seq_len, 1),
              {"input_size": seq_len, "features": features, "hidden": hidden,
               "layers": layers, "num_classes": num_classes})
    x = g.input
    for layer in range(1, layers + 1):
        x = g.lstm(x, hidden, name=f"lstm{layer}")
    last = g.slice(x, 1, axis=1, name="last_step") if seq_len > 1 else x
    g.softmax(g.fc(last, num_classes, name="fc"), name="softmax")
    return g
