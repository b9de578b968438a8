"""An xllamacpp whose native library does not load here, as on a system the wheel does not fit."""

raise ImportError("libgomp.so.1: cannot open shared object file: No such file or directory")
