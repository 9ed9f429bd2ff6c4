"""Layer 5, interop: APIs that mirror other entry points (Paddle's ``recompute_sequential``,
PyTorch's ``checkpoint``), ``patch_paddle`` and the testing kit (tensor comparison, loss parity).

Imports only the layers below.  See ARCHITECTURE.md.
"""
