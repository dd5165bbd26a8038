"""The kernel's type: `kernel(args, attrs) -> tuple of output arrays`."""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

Kernel = Callable[[Sequence[np.ndarray], Mapping[str, Any]], tuple[np.ndarray, ...]]
