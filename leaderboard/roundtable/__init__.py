"""The round table: what the round page (leaderboard/pages/rounds.py) shows, in the order it is made.

1. `rows.py`: the round's public results read into plain rows, one per system with a cell per
   benchmark (four queries whatever the size); not cached: the page caches what it renders.
2. `view.py`: `TableView`, the state of one view read from the query string through `form.py` (the
   filter controls) against `params.py` (what the query may hold); it filters and sorts the rows and
   writes the canonical query string, which is also the page's cache key.
3. `layout.py`: the view's rows split into tables (`sections`) and laid out as text, numbers formatted
   and tooltips written (`shown_table`); `hyphens.py` breaks long benchmark names in the headers.
4. `htmlrows.py`: the body rows as HTML; templates/leaderboard/_round_body.html and its includes
   place them with the header, filters and charts.

The exports (leaderboard/roundtable/exports.py) and the charts (leaderboard/pages/charts.py) take the same rows and view.
"""
