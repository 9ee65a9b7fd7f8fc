"""The command line: `gpulint scan`, `rules`, `explain`, `init`; options merged with the configuration."""

# The cyclic collector's threshold while the scan's modules are imported (launch.py) and while a
# scan runs (scancmd.run_scan). Both make millions of small objects and no reference cycles worth
# collecting (documents are freed by reference counting once scanned): at the default threshold
# (700) the collector ran over them thousands of times for nothing, about a fifth of a large scan's
# time; at 10,000 still 2-3 % of a cold scan (a collection walks every young object, ~2-6 ms each).
# The collector counts objects made minus objects freed, and a scan's net growth (its index,
# findings, report) stays under 200,000 up to 20,000 documents: no collection runs, and peak RSS is
# unchanged (1k to 20k documents, and the 200 MB stream: 277 -> 274 MB). Cyclic garbage can build
# up to that many objects before it is collected.
GC_THRESHOLD = 200_000
