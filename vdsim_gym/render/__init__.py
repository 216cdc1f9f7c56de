"""Pictures: every env's frame drawn with Pillow from its arrays (``frames``: the
``rgb_array`` and ``human`` modes) and GIF/MP4/PNG animations of recorded traces
(``trace``), written as ``vdsim-gym render`` writes them (``run``: ``run_render``). This
package imports nothing itself.
"""
