"""What a run is configured with: the vehicle and actuator configurations (``vehicle``:
frozen dataclasses read from YAML, their defaults from the C++ structs), the latency
models (``latency``: one class per kind), the network between controller and plant
(``network``) and the delay grammar of the command lines (``delays``). This package
imports nothing itself.
"""
