"""NestDNN: lifecycle and switching checks, the capacity derivation
(``python -m validation.nestdnn.derive``) and the report tool."""
