# Type stub of lapack_base.pyx (the finiteness check of linalg inputs; the drivers'
# shared helpers are cdef, not Python-visible).
# Keep in step with the .pyx: every Python-visible def there has its signature here.
from typing import Any

__all__ = ["all_finite"]

def all_finite(a: Any) -> bool: ...
