"""Options and pricing: the option kinds a block or call may take (``kinds``: ``full``,
``sub``, kept tensors; ``policies``; ``ops``) and how each is priced, by measured rounds
(``policies``), operator recording (``op_profile``, ``op_runs``), calibration and the
per-region overhead."""
