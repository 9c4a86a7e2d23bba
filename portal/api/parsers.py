"""The API's request parsers (REST framework's DEFAULT_PARSER_CLASSES): its own, with a JSON body nested too
deep answered 400 with the reason.

Python's json module reads arrays and objects inside each other by recursion: a body of 100,000 `[`
(100 kB, well inside the size limit) raised RecursionError past its depth of about 1,000, which nothing
caught (an HTML 500). Every body the API takes is a flat object.
"""

from rest_framework import parsers
from rest_framework.exceptions import ParseError

TOO_DEEP = (
    "JSON parse error - the body nests arrays or objects too deeply to be read (about 1,000 levels "
    "or more); the API takes flat objects (/api/docs/)."
)


class JSONParser(parsers.JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError(TOO_DEEP) from None
