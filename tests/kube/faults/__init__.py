"""The project's own chaos harness: faults against a real control plane (:mod:`.harness`) and a
CONNECT proxy for the transport tests (:mod:`.connectproxy`). Kept out of the shipped
``kschedfw.testing``, which holds only what plugin authors use."""
