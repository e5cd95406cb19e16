"""RQ jobs and the worker entry point (clocks, bot turns and webhooks arrive with issue 7/8)."""
