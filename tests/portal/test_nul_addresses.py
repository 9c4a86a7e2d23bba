"""A NUL character (%00) in an address or a query string answers 400, never a 500: PostgreSQL
neither stores nor finds one (portal/middleware.py)."""

import pytest

pytestmark = pytest.mark.django_db

ADDRESSES = [
    "/r/a%00b/",
    "/r/training-v5.1/a%00/b/",
    "/r/training-v5.1/a%00/b/bert/",
    "/id/5.1-%00",
    "/?q=a%00",
    "/api/v1/rounds/a%00/",
    "/api/v1/results/?round=a%00",
    "/review/a%00/",
    "/r/training-v5.1/?division%00=closed",
]


@pytest.mark.parametrize("address", ADDRESSES)
def test_a_nul_in_an_address_answers_400(client, rounds, address):
    client.raise_request_exception = False
    response = client.get(address)
    assert response.status_code == 400, response.status_code
    assert "NUL" in response.content.decode()


def test_addresses_without_one_are_untouched(client, rounds):
    assert client.get("/r/training-v5.1/?q=a").status_code == 200


def test_the_api_refuses_one_in_json_as_its_schema_says(client, rounds):
    response = client.get("/api/v1/systems/?accelerator=a%00")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    assert "NUL" in response.json()["detail"]
