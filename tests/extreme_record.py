"""The extreme record of the report-leak tests (issue 12, finding 2), shared by the core and
app tests: values that cannot arise by chance in an aggregate, and every rendering of them a
report could carry."""

EXTREME_ROW = 7
#: The extreme record's original values: the QIs, then the confidential value.
EXTREME = {"age": 117.25, "income": 987654.321, "hours": 83.125, "health": 55443.2211}
#: Every rendering of those values a report could carry (exact, rounded, grouped, scientific).
TOKENS = (
    "987654.321",
    "987654.32",
    "987654.3",
    "987654",
    "987,654",
    "9.877e+05",
    "9.8765e+05",
    "9.87654e+05",
    "117.25",
    "83.125",
    "83.12",
    "55443.2211",
    "55443.22",
    "55443",
    "55,443",
)
