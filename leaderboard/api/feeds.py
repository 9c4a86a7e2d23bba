"""Atom feeds of newly published results, for anyone (no account): per round, per benchmark (its key,
across rounds) and per organisation (as Submitter.organisation groups names), each announced on its
pages with <link rel="alternate" type="application/atom+xml">. They read leaderboard.access.public.results(), so the embargo holds for
them exactly as for the pages: nothing appears before its round's publication minute."""

from django.contrib.syndication.views import Feed
from django.http import Http404
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.feedgenerator import Atom1Feed
from django.utils.http import urlencode

from ..access.public import results
from ..models import Benchmark, Round

ENTRIES = 50


class _ResultsFeed(Feed):
    feed_type = Atom1Feed

    def results(self, obj):
        raise NotImplementedError

    def items(self, obj):
        return (
            self.results(obj)
            .select_related("system__round", "system__submitter", "benchmark")
            .order_by("-system__round__publish_at", "-pk")[:ENTRIES]
        )

    def item_title(self, result):
        minutes = f"{result.score_s / 60:.2f} min" if result.score_s is not None else "no score"
        return (
            f"{result.system.organisation_shown}: {result.system.name}, "
            f"{result.benchmark.name} in {minutes}"
        )

    def item_description(self, result):
        system = result.system
        return (
            f"{system.round.name}, {system.get_division_display()} division: "
            f"{result.benchmark.name}, public id {result.public_id or 'none'}."
        )

    def item_pubdateupdated(self, result):
        return result.system.round.published_at or result.system.round.publish_at

    def item_pubdate(self, result):
        return self.item_pubdateupdated(result)

    def item_updateddate(self, result):
        return self.item_pubdateupdated(result)

    def item_guid(self, result):
        return f"urn:uuid:{result.uid}"

    item_guid_is_permalink = False


class RoundFeed(_ResultsFeed):
    def get_object(self, request, round_key):
        return get_object_or_404(Round, key=round_key)

    def title(self, round_):
        return f"{round_.name}: published results"

    def link(self, round_):
        return round_.get_absolute_url()

    def description(self, round_):
        return f"Results of {round_.name} as they are published."

    def results(self, round_):
        return results().filter(system__round=round_)


class BenchmarkFeed(_ResultsFeed):
    def get_object(self, request, benchmark_key):
        if not results().filter(benchmark__key=benchmark_key).exists():
            # a benchmark with nothing public yet still has a feed, if it exists in some round
            if not Benchmark.objects.filter(key=benchmark_key).exists():
                raise Http404("No such benchmark.")
        return benchmark_key

    def title(self, key):
        return f"{key}: published results, every round"

    def link(self, key):
        return reverse("leaderboard:rounds")

    def results(self, key):
        return results().filter(benchmark__key=key)


class OrganisationFeed(_ResultsFeed):
    def get_object(self, request, name):
        return name

    def title(self, name):
        return f"{name}: published results"

    def link(self, name):
        return reverse("leaderboard:progress") + "?" + urlencode({"organisation": name})

    def results(self, name):
        return results().filter(system__submitter__organisation=name)
