"""What a running job reports of itself: progress lines in its log (``progress``), the
cost of its phases (``job_cost``) and the seconds numba spends compiling kernels
(``jit``)."""
