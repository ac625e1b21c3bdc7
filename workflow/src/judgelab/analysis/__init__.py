"""What the studies compute from labels, written once: agreement (kappa, weighted kappa, macro
F1, Krippendorff's alpha: :mod:`.agreement`), calibration (ECE with equal-width and equal-mass
bins, Brier score, reliability diagrams: :mod:`.calibration`), statistical tests and multiple-comparison
corrections (:mod:`.stats`), table rendering to Markdown, LaTeX and HTML (:mod:`.render`) and
plotting (:mod:`.plotting`)."""
