"""Sessions: conversations stored under a ``thread_id``, continued, resumed."""

__all__: list[str] = []
