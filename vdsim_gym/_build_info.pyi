# The build's provenance, generated at every build by cmake/git_info.cmake and installed
# as vdsim_gym/_build_info.py (the source tree has this stub only).
GIT_SHA: str
GIT_DIRTY: int  # 1, 0 or -1 (unknown)
