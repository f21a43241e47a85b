from .tools import shell
from .use import go
