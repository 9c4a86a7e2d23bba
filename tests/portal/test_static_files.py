"""Static files: collectstatic writes hashed, gzipped copies; whitenoise serves them cached for a
year and compressed; pages link the hashed names and the basic plotly bundle, loaded lazily."""

import re

import pytest
from django.core.management import call_command
from django.test import Client, override_settings


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    root = tmp_path_factory.mktemp("static")
    with override_settings(STATIC_ROOT=root):
        call_command("collectstatic", interactive=False, verbosity=0)
    return root


def test_collectstatic_writes_hashed_and_gzipped_copies(collected):
    css = list((collected / "css").glob("portal.*.css"))
    assert len(css) == 1 and re.fullmatch(r"portal\.[0-9a-f]{12}\.css", css[0].name)
    assert (collected / "css" / f"{css[0].name}.gz").is_file()
    basic = list((collected / "vendor").glob("plotly-basic.min.*.js"))
    assert basic and basic[0].stat().st_size < 2_000_000  # the basic bundle, not the 4.8 MB one


def test_whitenoise_serves_a_hashed_file_compressed_and_cached_for_a_year(collected):
    name = next((collected / "css").glob("portal.*.css")).name
    with override_settings(STATIC_ROOT=collected):
        response = Client().get(f"/static/css/{name}", HTTP_ACCEPT_ENCODING="gzip, br")
        plain = Client().get("/static/css/portal.css")
    assert response.status_code == 200 and response["Content-Encoding"] == "gzip"
    assert (
        "immutable" in response["Cache-Control"]
        and "max-age=315360000" in response["Cache-Control"]
    )
    assert plain.status_code == 200 and "immutable" not in plain["Cache-Control"]


@pytest.mark.django_db
def test_pages_link_hashed_names_and_load_plotly_basic_lazily(collected, rounds):
    with override_settings(STATIC_ROOT=collected):
        page = Client().get("/r/training-v5.1/").content.decode()
    assert re.search(r'href="/static/css/portal\.[0-9a-f]{12}\.css"', page)
    assert re.search(
        r'<script src="/static/js/charts\.[0-9a-f]{12}\.js" '
        r'data-plotly="/static/vendor/plotly-basic\.min\.[0-9a-f]{12}\.js" '
        r'data-plotly-rules="/static/css/plotly-rules\.[0-9a-f]{12}\.css" defer>',
        page,
    )
    assert "plotly.min" not in page  # no page loads the full bundle up front


@pytest.mark.django_db
def test_pages_work_where_nothing_was_collected(rounds, tmp_path):
    with override_settings(STATIC_ROOT=tmp_path):
        page = Client().get("/r/training-v5.1/")
        css = Client().get("/static/css/portal.css")
    assert page.status_code == 200 and 'href="/static/css/portal.css"' in page.content.decode()
    assert css.status_code == 200


def test_a_missing_static_file_is_not_found_by_the_finders():
    from django.contrib.staticfiles import finders

    assert finders.find("js/no-such-file.js") is None  # Django's own answer when no finder has it
    assert finders.find("js/no-such-file.js", find_all=True) == []


@pytest.mark.django_db
@pytest.mark.parametrize("debug", [True, False])
def test_a_missing_static_file_answers_404_in_every_mode(debug, tmp_path):
    with override_settings(DEBUG=debug, STATIC_ROOT=tmp_path):
        response = Client(raise_request_exception=False).get("/static/js/no-such-file.js")
    assert response.status_code == 404
