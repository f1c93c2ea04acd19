"""The peer the append and rebuild figures are compared with: the Python
`eventsourcing` library on SQLite, without signing or encryption.

The workload is famctl's own in `famctl bench`: EVENTS records, each
created by one event carrying the same fields (a postpartum mood record
with a short note), saved 1 000 to a transaction (famctl appends in
batches of 1 000, each one transaction); then every record is
reconstructed from its events (`repository.get`), which is the
library's replay. With one event per record, records per second and
events per second are the same figure.

PER (default 1) makes each record one `Created` and PER - 1 `Updated`
events instead, to see the library with longer aggregates; famctl's
bench does not compare against that shape.

Usage: python eventsourcing_peer.py EVENTS [PER]
  ->  prints JSON {events, events_per_aggregate, batch, append_eps,
                   replay_aggregates_ps, replay_eps}
"""
import json, os, sys, tempfile, time

from eventsourcing.application import Application
from eventsourcing.domain import Aggregate, event


class Record(Aggregate):
    @event("Created")
    def __init__(self, store: str, focus: str, fields: dict):
        self.store = store
        self.focus = focus
        self.fields = dict(fields)

    @event("Updated")
    def update(self, fields: dict):
        self.fields.update(fields)


class Records(Application):
    pass


BATCH = 1000


def main():
    n = int(sys.argv[1])
    per = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    with tempfile.TemporaryDirectory() as d:
        os.environ["PERSISTENCE_MODULE"] = "eventsourcing.sqlite"
        os.environ["SQLITE_DBNAME"] = os.path.join(d, "es.sqlite")
        app = Records()
        ids = []
        pending = []
        events = 0
        t0 = time.perf_counter()
        for i in range(n // per):
            r = Record(store="postpartum", focus="newMom",
                       fields={"kind": "mood", "mood": i % 5 + 1, "note": "slept a little better tonight"})
            for j in range(per - 1):
                r.update({"mood": j % 5 + 1})
            pending.append(r)
            ids.append(r.id)
            events += per
            if events % BATCH < per or per >= BATCH:
                app.save(*pending)
                pending = []
        if pending:
            app.save(*pending)
        append = time.perf_counter() - t0
        t0 = time.perf_counter()
        for i in ids:
            app.repository.get(i)
        replay = time.perf_counter() - t0
        print(json.dumps({"events": events, "events_per_aggregate": per, "batch": BATCH,
                          "append_eps": events / append,
                          "replay_aggregates_ps": len(ids) / replay, "replay_eps": events / replay}))


if __name__ == "__main__":
    main()
