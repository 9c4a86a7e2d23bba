"""update_rows(): many rows of one table, each with its own values, in few statements of hand-written SQL.

The pipeline writes what it found back to its rows in bulk: a batch of checked runs (checks._store, about a
dozen fields each, JSON among them), and finalize's runs and results. On PostgreSQL the rows' values come in
one `UPDATE ... FROM (VALUES ...)`; rows given the same plain values share one ORM update.

Kept for issue 27's ingest target: v5.1 through two workers within 3.5x the decompress-and-read floor
(bench/ingest.py), which is marginal even with it (7-10 s against a floor of about 2.3 s on a quiet machine).
Measured 2026-11-28 on the shared 2-core machine, bench/ingest.py --only worker, variants interleaved. Other
agents' load swung the wall-time ratios between 2.8x and 11x and no variant met 3.5x while it lasted, so the
decision rests on the CPU of the worker's process tree, which the ORM's ways raise by 15-60%:
- this module: 6.28, 6.19, 6.67 s (ratios 6.04x, 5.92x, 4.93x); before this session's other removals, 5.69-6.50 s;
- Django's bulk_update (a CASE per row and field): 10.08, 9.77, 9.79, 9.34 s (ratios 4.38x-11.28x);
- one ORM update per row: 7.59, 6.75 s (ratios 7.09x, 6.35x), and about 20 s more of the machine's CPU
  (PostgreSQL's share) per ingest.
"""

from django.db import connection


def update_rows(model, rows: list[tuple[int, dict]]) -> None:
    """UPDATE each row (pk, {field: value}) with its own values. Rows given the same plain values (finalize's
    counted and dropped marks) share one statement, WHERE pk IN (...). The others: one statement per set of
    field names, which on PostgreSQL takes the rows' values from a VALUES list, else is executed for each
    row. The ORM would compile an UPDATE per row (costlier than running it), and bulk_update writes a CASE
    per row and field (seconds for a whole round)."""
    alike: dict[tuple, list[int]] = {}  # ((name, value), ...) -> pks
    groups: dict[tuple, list] = {}  # names -> [(pk, fields)], one statement (or executemany) each
    for pk, fields in rows:
        try:
            alike.setdefault(tuple(fields.items()), []).append(pk)
        except TypeError:  # a JSON value: unhashable, and rarely shared
            groups.setdefault(tuple(fields), []).append((pk, fields))
    for assigned, pks in alike.items():
        if len(pks) > 1:
            size = connection.ops.bulk_batch_size(
                ["pk"], pks
            )  # SQLite takes 999 parameters at most
            for start in range(0, len(pks), size):
                model.objects.filter(pk__in=pks[start : start + size]).update(**dict(assigned))
        else:
            groups.setdefault(tuple(name for name, _ in assigned), []).append(
                (pks[0], dict(assigned))
            )
    quote = connection.ops.quote_name
    table, pk_column = quote(model._meta.db_table), quote(model._meta.pk.column)
    with connection.cursor() as cursor:
        for names, group in groups.items():
            columns = [model._meta.get_field(name) for name in names]
            values = [
                [c.get_db_prep_save(fields[c.name], connection) for c in columns] + [pk]
                for pk, fields in group
            ]
            if connection.vendor != "postgresql" or len(group) == 1:
                sets = ", ".join(f"{quote(c.column)} = %s" for c in columns)
                cursor.executemany(f"UPDATE {table} SET {sets} WHERE {pk_column} = %s", values)
                continue
            # PostgreSQL plans and runs each statement of executemany: for a batch of checked runs, twice the
            # server's time of one statement. The first row's casts give the VALUES list its columns' types.
            targets = [quote(c.column) for c in columns] + [pk_column]
            types = [c.db_type(connection) for c in columns] + [model._meta.pk.db_type(connection)]
            first = ", ".join(f"%s::{type_}" for type_ in types)
            tuples = ", ".join(
                [f"({first})"] + [f"({', '.join(['%s'] * len(targets))})"] * (len(values) - 1)
            )
            cursor.execute(
                f"UPDATE {table} SET {', '.join(f'{name} = v.{name}' for name in targets[:-1])} "
                f"FROM (VALUES {tuples}) AS v({', '.join(targets)}) WHERE {table}.{pk_column} = v.{pk_column}",
                [value for row in values for value in row],
            )
