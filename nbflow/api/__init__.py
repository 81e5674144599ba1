"""nbflow's account of TensorFlow 1.15's API: which names exist, which nbflow has.

``ledger`` reads the checked-in list of TensorFlow 1.15's public names (``tf1_names.json``, made by
``make_ledger``) and turns a missing one into an AttributeError that says so; ``coverage`` reports
per namespace how much of the list nbflow has (``python -m nbflow.api.coverage``).
"""
