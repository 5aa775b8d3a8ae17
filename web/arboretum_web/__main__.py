"""``python -m arboretum_web web ...``: ``arena web`` without the SDK's command."""

from .cli import main

raise SystemExit(main())
