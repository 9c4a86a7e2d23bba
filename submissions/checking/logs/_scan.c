/* The lines parse_file may leave out, found in one pass over a block's text (see LeftOut in leave_out.py).

   LeftOut in Python spends about a third of a v5.1 check on v5.1's tracked_stats lines: a dozen steps per
   line and a dozen searches of their joined text. This does the same judging on the text's bytes in C;
   leave_out.py falls back to its Python twin, which stays the reference, when this module is not built.

   Read-only on the text it is given; every access is bounded by the text's length. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#define MAX_WORDS 32

#ifndef __GLIBC__  /* memrchr is a GNU extension */
static void *
memrchr(const void *s, int c, size_t n)
{
    const unsigned char *p = (const unsigned char *)s + n;
    while (p > (const unsigned char *)s)
        if (*--p == (unsigned char)c)
            return (void *)p;
    return NULL;
}
#endif

typedef struct {
    const char *s;
    Py_ssize_t n;
} Bytes;

typedef struct {
    Bytes words[MAX_WORDS];
    int count;
    unsigned char single[256];     /* bytes that are a one-byte word */
    unsigned char begins[65536];   /* [b0 << 8 | b1]: a longer word begins with the bytes b0 b1, or b0 is a word */
} Words;

static int
ascii_bytes(PyObject *text, Bytes *out)
{
    if (!PyUnicode_Check(text) || PyUnicode_READY(text) < 0 || !PyUnicode_IS_COMPACT_ASCII(text))
        return 0;
    out->s = (const char *)PyUnicode_DATA(text);
    out->n = PyUnicode_GET_LENGTH(text);
    return 1;
}

typedef struct {
    Bytes s;
    Py_ssize_t skip[256];  /* Horspool's: how far the needle may move on when this byte ends the window */
} Needle;

static void
needle_init(Needle *nd, Bytes s)
{
    nd->s = s;
    for (int c = 0; c < 256; c++)
        nd->skip[c] = s.n;
    for (Py_ssize_t i = 0; i < s.n - 1; i++)
        nd->skip[(unsigned char)s.s[i]] = s.n - 1 - i;
}

static const char *
needle_find(const char *hay, const char *end, const Needle *nd)
{
    /* Horspool's search, its table made once per text: memmem makes its own on every call. */
    Py_ssize_t n = nd->s.n;
    unsigned char last = (unsigned char)nd->s.s[n - 1];
    while (end - hay >= n) {
        unsigned char c = (unsigned char)hay[n - 1];
        if (c == last && memcmp(hay, nd->s.s, n - 1) == 0)
            return hay;
        hay += nd->skip[c];
    }
    return NULL;
}

static const char *
lone_colons(const char *p, const char *end, const char **run_end)
{
    /* The start of the one run of three to five colons in [p, end), when the line holds one ":::" (as
       str.count counts: each run of colons holds a third of its length) and no other; else NULL.
       memchr scans many bytes a step, where memmem would set up its tables for each line. */
    const char *run = NULL;
    while (end - p >= 3 && (p = memchr(p, ':', end - p - 2)) != NULL) {
        if (p[1] != ':') {
            p += 2;
            continue;
        }
        if (p[2] != ':') {
            p += 3;
            continue;
        }
        const char *q = p + 3;
        while (q < end && *q == ':')
            q++;
        if (run != NULL || q - p >= 6)
            return NULL;  /* a second ":::" */
        run = p;
        *run_end = q;
        p = q;
    }
    return run;
}

static int
holds_word(const char *p, const char *end, const Words *w)
{
    if (p < end && w->single[(unsigned char)end[-1]])
        return 1;
    /* One table read per byte: the bytes of a line rarely begin a word. */
    for (; end - p >= 2; p++) {
        if (!w->begins[(unsigned char)p[0] << 8 | (unsigned char)p[1]])
            continue;
        if (w->single[(unsigned char)p[0]])
            return 1;
        for (int k = 0; k < w->count; k++) {
            Bytes word = w->words[k];  /* a pair may begin other words ("ev" of "event_type"): compared inline */
            if (word.n >= 2 && word.n <= end - p && word.s[0] == p[0] && word.s[1] == p[1]
                && (word.n == 2 || word.s[2] == p[2]) && memcmp(p, word.s, word.n) == 0)
                return 1;
        }
    }
    return 0;
}

static PyObject *
read_words(PyObject *seq, Words *w)
{
    /* Returns a new reference to the sequence of the words, which keeps them alive while w is used. */
    memset(w, 0, sizeof(*w));
    PyObject *fast = PySequence_Fast(seq, "words must be a sequence of str");
    if (fast == NULL)
        return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > MAX_WORDS) {
        PyErr_Format(PyExc_ValueError, "at most %d words", MAX_WORDS);
        Py_DECREF(fast);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        Bytes word;
        if (!ascii_bytes(PySequence_Fast_GET_ITEM(fast, i), &word) || word.n == 0) {
            PyErr_SetString(PyExc_ValueError, "words must be non-empty ASCII str");
            Py_DECREF(fast);
            return NULL;
        }
        w->words[w->count++] = word;
        unsigned char c0 = (unsigned char)word.s[0];
        if (word.n == 1) {
            w->single[c0] = 1;
            memset(w->begins + (c0 << 8), 1, 256);
        } else {
            w->begins[c0 << 8 | (unsigned char)word.s[1]] = 1;
        }
    }
    return fast;
}

PyDoc_STRVAR(candidates_doc,
"candidates(text, needle, marker, words) -> (spans, records) | None\n\n"
"The lines of text that hold needle, end with LF and pass LeftOut's text terms: exactly one \":::\"\n"
"(counted as str.count counts) and exactly one marker + \" {\", and none of words. A line is taken without\n"
"its LF and without one CR just before it. spans: each such line's start and end, flat; records: the text\n"
"after the first marker of each such line, joined by LF. None when text is not ASCII (the caller judges it).\n"
"words (an iterable of str) and the others must be ASCII.");

static PyObject *
candidates(PyObject *self, PyObject *args)
{
    PyObject *text_obj, *needle_obj, *marker_obj, *words_obj;
    if (!PyArg_ParseTuple(args, "UUUO:candidates", &text_obj, &needle_obj, &marker_obj, &words_obj))
        return NULL;
    Bytes text, needle, marker;
    if (!ascii_bytes(text_obj, &text))
        Py_RETURN_NONE;
    if (!ascii_bytes(needle_obj, &needle) || !ascii_bytes(marker_obj, &marker) || needle.n == 0 || marker.n == 0) {
        PyErr_SetString(PyExc_ValueError, "needle and marker must be non-empty ASCII str");
        return NULL;
    }
    if (memchr(needle.s, '\n', needle.n) != NULL) {
        PyErr_SetString(PyExc_ValueError, "needle must not hold an LF");
        return NULL;
    }
    if (marker.n < 3 || memcmp(marker.s, ":::", 3) != 0 || memchr(marker.s + 3, ':', marker.n - 3) != NULL) {
        PyErr_SetString(PyExc_ValueError, "marker must begin with ':::' and hold no other colon");
        return NULL;
    }
    char opening[64];
    if (marker.n + 2 > (Py_ssize_t)sizeof(opening)) {
        PyErr_SetString(PyExc_ValueError, "marker too long");
        return NULL;
    }
    memcpy(opening, marker.s, marker.n);
    memcpy(opening + marker.n, " {", 2);
    Bytes marker_open = {opening, marker.n + 2};
    Words *words = PyMem_Malloc(sizeof(Words));
    if (words == NULL)
        return PyErr_NoMemory();
    PyObject *words_alive = read_words(words_obj, words);
    if (words_alive == NULL) {
        PyMem_Free(words);
        return NULL;
    }
    Needle nd;
    needle_init(&nd, needle);

    PyObject *spans = PyList_New(0), *records = NULL, *result = NULL;
    char *joined = NULL;  /* the records, joined; at most the text's length */
    Py_ssize_t size = 0;
    if (spans == NULL || (joined = PyMem_Malloc(text.n + 1)) == NULL) {
        if (spans != NULL)
            PyErr_NoMemory();
        goto done;
    }
    const char *s = text.s, *end = text.s + text.n, *at = s;
    while ((at = needle_find(at, end, &nd)) != NULL) {
        const char *line_end = memchr(at, '\n', end - at);
        if (line_end == NULL)
            break;  /* the last line, without an LF */
        const char *start = memrchr(s, '\n', at - s);
        start = start == NULL ? s : start + 1;
        const char *stop = line_end[-1] == '\r' ? line_end - 1 : line_end;  /* line_end > at >= start */
        at = line_end;
        /* With one ":::", the marker (":::" and no other colon) + " {" can only begin three before the run's end;
           so that is where the line's one marker + " {" and its first marker are, or the line fails. */
        const char *run_end = NULL, *run = lone_colons(start, stop, &run_end);
        if (run == NULL || stop - (run_end - 3) < marker_open.n || memcmp(run_end - 3, opening, marker_open.n) != 0
            || holds_word(start, stop, words))
            continue;
        const char *record = run_end - 3 + marker.n;
        if (size)
            joined[size++] = '\n';
        memcpy(joined + size, record, stop - record);  /* fits: the records are disjoint parts of the text */
        size += stop - record;
        PyObject *a = PyLong_FromSsize_t(start - s), *b = PyLong_FromSsize_t(stop - s);
        int failed = a == NULL || b == NULL || PyList_Append(spans, a) < 0 || PyList_Append(spans, b) < 0;
        Py_XDECREF(a);
        Py_XDECREF(b);
        if (failed)
            goto done;
    }
    records = PyUnicode_FromStringAndSize(joined, size);
    if (records != NULL)
        result = PyTuple_Pack(2, spans, records);
done:
    Py_DECREF(words_alive);
    PyMem_Free(words);
    PyMem_Free(joined);
    Py_XDECREF(spans);
    Py_XDECREF(records);
    return result;
}

PyDoc_STRVAR(cut_doc,
"cut(text, spans) -> (text, offsets)\n\n"
"text without the parts spans names (flat start, end pairs, in order, not overlapping), and where each cut\n"
"part was in the text returned.");

static PyObject *
cut(PyObject *self, PyObject *args)
{
    PyObject *text_obj, *spans_obj;
    if (!PyArg_ParseTuple(args, "UO!:cut", &text_obj, &PyList_Type, &spans_obj))
        return NULL;
    if (PyUnicode_READY(text_obj) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text_obj), pairs = PyList_GET_SIZE(spans_obj) / 2;
    if (PyList_GET_SIZE(spans_obj) % 2) {
        PyErr_SetString(PyExc_ValueError, "spans must hold start, end pairs");
        return NULL;
    }
    /* Check the spans before building anything. */
    Py_ssize_t kept = n, last = 0;
    for (Py_ssize_t k = 0; k < pairs; k++) {
        Py_ssize_t a = PyLong_AsSsize_t(PyList_GET_ITEM(spans_obj, 2 * k));
        Py_ssize_t b = PyLong_AsSsize_t(PyList_GET_ITEM(spans_obj, 2 * k + 1));
        if ((a == -1 || b == -1) && PyErr_Occurred())
            return NULL;
        if (a < last || b < a || b > n) {
            PyErr_SetString(PyExc_ValueError, "spans must be in order, not overlapping, within the text");
            return NULL;
        }
        kept -= b - a;
        last = b;
    }
    PyObject *out = PyUnicode_New(kept, PyUnicode_MAX_CHAR_VALUE(text_obj));
    PyObject *offsets = PyList_New(pairs);
    if (out == NULL || offsets == NULL)
        goto fail;
    Py_ssize_t done = 0, size = 0;
    for (Py_ssize_t k = 0; k < pairs; k++) {
        Py_ssize_t a = PyLong_AsSsize_t(PyList_GET_ITEM(spans_obj, 2 * k));
        Py_ssize_t b = PyLong_AsSsize_t(PyList_GET_ITEM(spans_obj, 2 * k + 1));
        if (a > done && PyUnicode_CopyCharacters(out, size, text_obj, done, a - done) < 0)
            goto fail;
        size += a - done;
        PyObject *offset = PyLong_FromSsize_t(size);
        if (offset == NULL)
            goto fail;
        PyList_SET_ITEM(offsets, k, offset);
        done = b;
    }
    if (n > done && PyUnicode_CopyCharacters(out, size, text_obj, done, n - done) < 0)
        goto fail;
    PyObject *result = PyTuple_Pack(2, out, offsets);
    Py_DECREF(out);
    Py_DECREF(offsets);
    return result;
fail:
    Py_XDECREF(out);
    Py_XDECREF(offsets);
    return NULL;
}

PyDoc_STRVAR(count_lf_doc,
"count_lf(data) -> int\n\n"
"data.count(b\"\\n\") for a bytes-like object, a few times faster on text (bytes.count compares byte by byte).");

static PyObject *
count_lf(PyObject *self, PyObject *arg)
{
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE) < 0)
        return NULL;
    const char *p = view.buf, *end = p + view.len;
    Py_ssize_t found = 0;
    /* glibc's memchr scans many bytes a step; a log's lines are a hundred bytes or more. */
    while (p < end && (p = memchr(p, '\n', end - p)) != NULL) {
        found++;
        p++;
    }
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(found);
}

static PyMethodDef methods[] = {
    {"count_lf", count_lf, METH_O, count_lf_doc},
    {"candidates", candidates, METH_VARARGS, candidates_doc},
    {"cut", cut, METH_VARARGS, cut_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_scan", "The lines parse_file may leave out, found in C (see leave_out.py).", -1, methods,
};

PyMODINIT_FUNC
PyInit__scan(void)
{
    return PyModule_Create(&module);
}
