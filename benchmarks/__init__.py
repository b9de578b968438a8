"""ASV micro-benchmarks of leanloop's hot paths (see ``benchmarks/README.md``).

ASV imports every module of this package to discover benchmarks, so modules here must be
cheap to import and free of side effects.
"""
