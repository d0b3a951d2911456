"""The processes rocmtui starts: the detached trainer, the ranks through torch's elastic launcher, a script under
``rocmtui run``, their supervisors, and the headless front of a training."""
