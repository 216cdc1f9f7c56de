"""Measurements on the plant and the bench: a vehicle's handling (``handling``), the
robot driver's loop margins on the dyno (``margins``: ``LoopModel``, ``loop_margins``,
``time_domain_delay_margin``) and the cross-check against CommonRoad's published vehicle
models (``validation``, the validation extra).
"""
