"""What the studies compute from labels, written once: agreement (kappa, weighted kappa, macro
F1, Krippendorff's alpha: :mod:`.agreement`), calibration (ECE with equal-width and equal-mass
bins, Brier score, reliability diagrams: :mod:`.calibration`), value agreement (Bland-Altman's
bias, limits of agreement and proportional bias, the ranges of the evaluation measures:
:mod:`.blandaltman`), runs scored under qrels with ir-measures in trec_eval's order (:mod:`.scores`),
systems' orders and their rank correlations (:mod:`.rankcorr`), the gap-weighted rank correlation tau_gap (:mod:`.taugap`), statistical tests and multiple-comparison
corrections (:mod:`.stats`), table rendering to Markdown, LaTeX and HTML (:mod:`.render`) and
plotting (:mod:`.plotting`)."""
