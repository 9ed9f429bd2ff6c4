"""The Tensor surface: MindSpore's members installed on ``paddle.Tensor``, dispatched on the
calling module (NOTE [ Caller-scoped Tensor semantics ] in ``scope.py``). Private."""
