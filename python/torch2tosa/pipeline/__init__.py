"""Pass pipelines: parsed (`syntax`), checked against the passes' ordering rules
(`ordering`), run stage by stage with reproducers (`runner`), and the default one
(`default`).

The names below are the pipeline API the compiler, the driver and scripts use.
"""

from .default import PipelineOptions, default_pipeline
from .runner import resolve, run_pipeline
from .syntax import parse_pipeline

__all__ = ["PipelineOptions", "default_pipeline", "parse_pipeline", "resolve", "run_pipeline"]
