"""``rocmtui doctor``: system checks (``checks``), the torch build (``torch_info``) and the report (``report``)."""
