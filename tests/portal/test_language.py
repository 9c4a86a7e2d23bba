"""Which language a request is answered in (portal/language.py): `?lang=`, kept in the cookie, then the
cookie, then Accept-Language; the header's switcher; the API's errors in Accept-Language's language; and the
same addresses, scores and field names in both languages."""

import re

import pytest

from .. import leaderboard_factories as make

pytestmark = pytest.mark.django_db

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def _lang(html: str) -> str:
    return re.search(r'<html lang="([^"]+)"', html)[1]


def test_a_page_is_in_english_without_a_choice(client, rounds):
    response = client.get("/rounds/")
    html = response.content.decode()
    assert _lang(html) == "en-gb"
    assert response["Content-Language"] == "en-gb"
    assert ">Rounds<" in html and not CHINESE.search(html.replace("简体中文", ""))


def test_accept_language_picks_chinese(client, rounds):
    response = client.get("/rounds/", headers={"accept-language": "zh-CN,zh;q=0.9,en;q=0.8"})
    html = response.content.decode()
    assert _lang(html) == "zh-hans"
    assert response["Content-Language"] == "zh-hans"
    assert ">轮次<" in html
    assert "Accept-Language" in response["Vary"]


def test_a_lang_link_opens_in_its_language_and_the_cookie_keeps_it(client, rounds):
    response = client.get("/rounds/?lang=zh-hans")
    assert _lang(response.content.decode()) == "zh-hans"
    assert response.cookies["lang"].value == "zh-hans"
    # The next page, without ?lang= and with an English browser, stays in Chinese: the cookie says so.
    later = client.get("/", headers={"accept-language": "en"})
    assert _lang(later.content.decode()) == "zh-hans"
    # And back.
    assert _lang(client.get("/?lang=en").content.decode()) == "en-gb"
    assert _lang(client.get("/").content.decode()) == "en-gb"


def test_an_unknown_lang_is_ignored(client, rounds):
    response = client.get("/rounds/?lang=xx-nope", headers={"accept-language": "zh-hans"})
    assert _lang(response.content.decode()) == "zh-hans"
    assert "lang" not in response.cookies


def test_the_switcher_links_this_page_in_each_language_with_its_query(client, rounds):
    html = client.get("/rounds/?x=1&lang=zh-hans").content.decode()
    nav = re.search(r'<nav class="languages"[^>]*>(.*?)</nav>', html, re.S)[1]
    links = dict(re.findall(r'<a href="([^"]+)" lang="([^"]+)"', nav))
    assert set(links.values()) == {"en-gb", "zh-hans"}
    assert "/rounds/?x=1&amp;lang=en-gb" in links
    assert 'aria-current="true">简体中文<' in nav


def test_a_round_page_is_kept_once_per_language(client, rounds):
    v51 = rounds["training-v5.1"]
    make.result(make.system(v51, "Dell", "xe9680", name="XE9680"), "retinanet", 30)
    english = client.get("/r/training-v5.1/").content.decode()
    chinese = client.get("/r/training-v5.1/", headers={"accept-language": "zh-hans"})
    chinese = chinese.content.decode()
    assert _lang(english) == "en-gb" and _lang(chinese) == "zh-hans"
    # The cached English page is not answered to the Chinese reader, nor the other way round.
    assert _lang(client.get("/r/training-v5.1/").content.decode()) == "en-gb"
    # The same data in both: the system's row and its score.
    for html in (english, chinese):
        assert 'data-system="Dell/xe9680"' in html


def test_the_api_answers_its_errors_in_accept_languages_language(client, rounds):
    english = client.get("/api/v1/results/?round=nope&ordering=%00")
    chinese = client.get("/api/v1/submissions/", headers={"accept-language": "zh-hans"})
    assert english.status_code == 400
    assert chinese.status_code in (401, 403)
    assert CHINESE.search(chinese.json()["detail"])  # DRF's own catalogue: 身份认证信息未提供。
    assert chinese["Content-Language"] == "zh-hans"


# What the API says in words (a result's findings in a reader's words): in Accept-Language's language.
PROSE = {"findings_summary"}


def test_the_apis_field_names_and_data_are_the_same_in_both_languages(client, rounds):
    v51 = rounds["training-v5.1"]
    make.result(make.system(v51, "Dell", "xe9680", name="XE9680"), "retinanet", 30)
    english = client.get("/api/v1/results/?round=training-v5.1").json()
    chinese = client.get(
        "/api/v1/results/?round=training-v5.1", headers={"accept-language": "zh-hans"}
    ).json()
    assert english.keys() == chinese.keys()
    [one], [un] = english["results"], chinese["results"]
    assert one.keys() == un.keys()
    assert {k: v for k, v in one.items() if k not in PROSE} == {
        k: v for k, v in un.items() if k not in PROSE
    }
    assert one["findings_summary"] == "The checks found nothing to report."
    assert un["findings_summary"] == "检查未发现需要报告的问题。"


def test_the_csv_keeps_mlcommons_headers_unless_the_reader_asks_for_chinese_ones(client, rounds):
    v51 = rounds["training-v5.1"]
    make.result(make.system(v51, "Dell", "xe9680", name="XE9680"), "retinanet", 30)
    chinese_page = {"accept-language": "zh-hans"}
    english = client.get("/r/training-v5.1/?format=csv").content.decode().splitlines()
    default = client.get("/r/training-v5.1/?format=csv", headers=chinese_page)
    default = default.content.decode().splitlines()
    named = client.get("/r/training-v5.1/?format=csv&headers=zh-hans", headers=chinese_page)
    named = named.content.decode().splitlines()
    # A script's CSV is the same whatever the browser's language: MLCommons' column names, English data.
    assert default == english
    assert english[0].startswith("Public ID,Organization,Availability,Division,System Name")
    assert "Available on-premise,Closed,XE9680" in english[1]
    # Asked for, the column names are Chinese (a benchmark's name as published) and the data the same.
    assert named[0].startswith("公开编号,机构,可用性,组别,系统名称")
    assert "（分钟）" in named[0] and "Minutes" not in named[0]
    assert named[1:] == english[1:]
    # The Chinese page offers that CSV; the English one does not.
    page = client.get("/r/training-v5.1/", headers=chinese_page).content.decode()
    assert "headers=zh-hans" in page
    assert "headers=" not in client.get("/r/training-v5.1/").content.decode()
