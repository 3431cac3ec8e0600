"""One text parser per tool family; `structured` reads the JSON any of them can emit."""
