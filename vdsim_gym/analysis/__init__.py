"""Measurements on the plant and the bench: a vehicle's handling (``handling``;
``run_handling``: ``vdsim-gym handling``), the robot driver's loop margins on the dyno
(``margins``: ``LoopModel``, ``loop_margins``, ``time_domain_delay_margin``), the dyno's
delay table beside them (``dyno_table``; ``run_dyno_table``: ``vdsim-gym dyno-table``) and
the cross-check against CommonRoad's published vehicle models (``validation``, the
validation extra; ``vdsim-gym validate``).
"""
