from .models import Order
from .pricing import total

__all__ = ["Order", "total"]
