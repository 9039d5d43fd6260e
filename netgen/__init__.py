"""netgen: generate, check and roll out switch configurations for RoCE AI-training backend fabrics.

Data flows one way: intent -> topology -> checks -> per-device view -> render -> diff -> deploy.
"""

__version__ = "0.1.0"
