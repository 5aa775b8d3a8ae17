"""The collusion audit: pairs whose head-to-head results depart from the fit (:mod:`.stats`,
pure), the pairs an operator leaves out of the fit (:mod:`.exclusions`), and ``arena league
audit`` (:mod:`.cli`)."""
