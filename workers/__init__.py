"""RQ jobs (``workers.jobs``) and the worker entry point (``workers.main``)."""
