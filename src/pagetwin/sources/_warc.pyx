# cython: boundscheck=False, wraparound=False, cdivision=True
"""The head of one well-formed WARC record, found and parsed in one call (sources.warc's
quick path): the WARC header, its Content-Length, the "\\r\\n\\r\\n" framing after the block and
the HTTP head at the block's start.

``record_at`` reads only the usual record and answers None for anything else (a header that is
not plain ASCII "name: value" lines ended by CRLF, no Content-Length of plain digits, a block
not followed by "\\r\\n\\r\\n", bytes past the buffer): sources.warc then reads the record with
its Python path, the reference this must agree with (tests/sources/test_warc_quick.py). What it
does answer is exactly what that path reads from the same bytes: the same header fields (the
first of a repeated name, names lower-cased, values stripped of the blanks bytes.strip()
strips), the same framing, the same HTTP status and header values as payload.parse_http_head
and HttpMessage.get.
"""

from cpython.bytes cimport PyBytes_AS_STRING, PyBytes_GET_SIZE

cdef enum:
    MAX_WARC_HEAD = 32768  # warc.MAX_WARC_HEAD: a longer header is not one
    HEAD_BYTES = 65536  # warc.HEAD_BYTES: the HTTP head must end in the block's first bytes
    MAX_NAME = 256  # longer field names are lower-cased by Python

# What the block holds, the last item of record_at's answer
HTTP_NONE = 0  # no "HTTP/" at its start
HTTP_READ = 1  # an HTTP head, read
HTTP_OTHER = -1  # an HTTP head this does not read (the Python path does)


cdef inline bint _blank_between(unsigned char c) noexcept nogil:
    # warc._BLANK: what may stand between records
    return c == 13 or c == 10 or c == 9 or c == 32 or c == 0


cdef inline bint _ascii_blank(unsigned char c) noexcept nogil:
    # what bytes.strip() strips (warc._ASCII_BLANKS)
    return c == 32 or (9 <= c <= 13)


cdef inline bint _is_digit(unsigned char c) noexcept nogil:
    return 48 <= c <= 57


cdef str _lower_name(const unsigned char* s, Py_ssize_t a, Py_ssize_t b):
    cdef char low[MAX_NAME]
    cdef Py_ssize_t k
    cdef unsigned char c
    if b - a > MAX_NAME:
        return (<const char*>s)[a:b].decode("ascii").lower()
    for k in range(b - a):
        c = s[a + k]
        low[k] = <char>(c + 32 if 65 <= c <= 90 else c)
    return low[: b - a].decode("ascii")


cdef inline bint _name_is(const unsigned char* s, Py_ssize_t a, Py_ssize_t b, const char* name, Py_ssize_t n) noexcept nogil:
    """Whether s[a:b], lower-cased, is ``name`` (lower case)."""
    cdef Py_ssize_t k
    cdef unsigned char c
    if b - a != n:
        return False
    for k in range(n):
        c = s[a + k]
        if 65 <= c <= 90:
            c += 32
        if c != <unsigned char>name[k]:
            return False
    return True


def record_at(bytes buf, Py_ssize_t at, Py_ssize_t data_end, Py_ssize_t stop):
    """The usual WARC record at or after ``at`` in ``buf`` (after the line ends and padding
    between records): (start, block start, block end, {field name: value}, http), indexes into
    ``buf``; () when no record starts before ``stop`` (_plain_warc's loop ends there), where
    ``http`` is (HTTP_READ, status or None, Content-Type, Transfer-Encoding, Content-Encoding,
    payload offset in the block) or (HTTP_NONE,) or (HTTP_OTHER,). None when the bytes there
    are not the usual record (see the module's doc). ``data_end``: where the data ends (the
    file's or the member's end), at or past the end of ``buf`` (a window of the data)."""
    cdef const unsigned char* s = <const unsigned char*>PyBytes_AS_STRING(buf)
    cdef Py_ssize_t n = PyBytes_GET_SIZE(buf)
    cdef Py_ssize_t p = at, start, lim, q, colon, nl, a, b, head_end, k
    cdef Py_ssize_t len_a = -1, len_b = -1, length, end
    cdef unsigned char c
    cdef dict fields = {}
    cdef str name
    if n > data_end:
        return None
    while p < n and _blank_between(s[p]):
        p += 1
    if p >= stop or (p >= n and n == data_end):
        return ()  # no record starts before stop (blanks to the end of the data)
    if p >= n:
        return None  # blanks to the end of the window
    start = p
    lim = n if n - p < MAX_WARC_HEAD else p + MAX_WARC_HEAD
    # the version line: warc._VERSION_LINE, WARC/[0-2]\.\d{1,4}\r?\n
    if lim - p < 8 or s[p] != 87 or s[p + 1] != 65 or s[p + 2] != 82 or s[p + 3] != 67 or s[p + 4] != 47:
        return None
    if not (48 <= s[p + 5] <= 50) or s[p + 6] != 46:
        return None
    q = p + 7
    while q < lim and q < p + 11 and _is_digit(s[q]):
        q += 1
    if q == p + 7 or q >= lim:
        return None
    if s[q] == 13:
        q += 1
    if q >= lim or s[q] != 10:
        return None
    q += 1
    # the header lines: warc._PLAIN_HEAD, all ASCII (_plain_head's first reading)
    while True:
        if q + 1 >= lim:
            return None
        if s[q] == 13 and s[q + 1] == 10:
            head_end = q + 2
            break
        c = s[q]
        if c == 32 or c == 9 or c == 58 or c == 13 or c == 10:
            return None
        colon = q
        while colon < lim and s[colon] != 58:
            if s[colon] == 10 or s[colon] >= 128:
                return None
            colon += 1
        if colon >= lim:
            return None
        nl = colon + 1
        while nl < lim and s[nl] != 10:
            if s[nl] >= 128:
                return None
            nl += 1
        if nl >= lim or s[nl - 1] != 13 or nl - 1 <= colon:
            return None
        a, b = q, colon
        while a < b and _ascii_blank(s[a]):
            a += 1
        while b > a and _ascii_blank(s[b - 1]):
            b -= 1
        if a < b:
            name = _lower_name(s, a, b)
            if name not in fields:
                a, b = colon + 1, nl - 1
                while a < b and _ascii_blank(s[a]):
                    a += 1
                while b > a and _ascii_blank(s[b - 1]):
                    b -= 1
                fields[name] = (<const char*>s)[a:b].decode("ascii")
                if name == "content-length":
                    len_a, len_b = a, b
        q = nl + 1
    # Content-Length: plain digits (anything else is for the Python path to judge)
    if len_a < 0 or len_b == len_a or len_b - len_a > 18:
        return None
    length = 0
    for k in range(len_a, len_b):
        if not _is_digit(s[k]):
            return None
        length = length * 10 + (s[k] - 48)
    end = head_end + length
    if end + 4 > n or s[end] != 13 or s[end + 1] != 10 or s[end + 2] != 13 or s[end + 3] != 10:
        return None  # not framed by "\r\n\r\n" in the buffer: the Python path frames it
    return start, head_end, end, fields, _http_head(s, head_end, head_end + (length if length < HEAD_BYTES else HEAD_BYTES))


cdef tuple _http_head(const unsigned char* s, Py_ssize_t p, Py_ssize_t first_end):
    """payload.parse_http_head and HttpMessage.get of the HTTP head at s[p:], in the block's
    first bytes s[p:first_end], for a head of printable ASCII lines ended by CRLF or LF and then
    a blank CRLF line; (HTTP_OTHER,) for any other head."""
    cdef Py_ssize_t q, line_end, nl, a, b, t, k, head_end = -1
    cdef Py_ssize_t ct_a = -1, ct_b = -1, te_a = -1, te_b = -1, ce_a = -1, ce_b = -1
    cdef Py_ssize_t status_a = -1, status_b = -1
    cdef unsigned char c
    cdef object status = None
    cdef const char* cs = <const char*>s
    if first_end - p < 5 or s[p] != 72 or s[p + 1] != 84 or s[p + 2] != 84 or s[p + 3] != 80 or s[p + 4] != 47:
        return (HTTP_NONE,)
    # the end of the head: the first "\r\n\r\n" (a "\n\n" before it: the Python path reads it)
    q = p
    while q < first_end:
        c = s[q]
        if c == 10:
            if q + 1 < first_end and s[q + 1] == 10:
                return (HTTP_OTHER,)
            if q > p and s[q - 1] == 13 and q + 2 < first_end and s[q + 1] == 13 and s[q + 2] == 10:
                head_end = q - 1
                break
        elif c == 13:
            if q + 1 >= first_end or s[q + 1] != 10:
                return (HTTP_OTHER,)
        elif c != 9 and not (32 <= c <= 126):
            return (HTTP_OTHER,)
        q += 1
    if head_end < 0:
        return (HTTP_OTHER,)
    # the status line: its second word, when all digits
    nl = p
    while nl < head_end and s[nl] != 10:
        nl += 1
    line_end = nl - 1 if nl > p and s[nl - 1] == 13 else nl
    a = p
    while a < line_end and s[a] != 32 and s[a] != 9:
        a += 1
    while a < line_end and (s[a] == 32 or s[a] == 9):
        a += 1
    b = a
    while b < line_end and s[b] != 32 and s[b] != 9:
        b += 1
    if a < b:
        for k in range(a, b):
            if not _is_digit(s[k]):
                break
        else:
            if b - a > 9:
                return (HTTP_OTHER,)
            status = int(cs[a:b])
    # the header lines
    q = nl + 1
    while q < head_end:
        nl = q
        while nl < head_end and s[nl] != 10:
            nl += 1
        line_end = nl - 1 if nl < head_end and s[nl - 1] == 13 else nl
        if s[q] == 32 or s[q] == 9:
            return (HTTP_OTHER,)  # a folded line
        t = q
        while t < line_end and s[t] != 58:
            t += 1
        if t < line_end:
            a, b = q, t
            while b > a and (s[b - 1] == 32 or s[b - 1] == 9):
                b -= 1
            if b > a:
                k = t + 1
                while k < line_end and (s[k] == 32 or s[k] == 9):
                    k += 1
                t = line_end
                while t > k and (s[t - 1] == 32 or s[t - 1] == 9):
                    t -= 1
                if t > k:  # HttpMessage.get takes the first non-empty value
                    if ct_a < 0 and _name_is(s, a, b, "content-type", 12):
                        ct_a, ct_b = k, t
                    elif te_a < 0 and _name_is(s, a, b, "transfer-encoding", 17):
                        te_a, te_b = k, t
                    elif ce_a < 0 and _name_is(s, a, b, "content-encoding", 16):
                        ce_a, ce_b = k, t
        q = nl + 1
    return (
        HTTP_READ, status,
        cs[ct_a:ct_b].decode("ascii") if ct_a >= 0 else "",
        cs[te_a:te_b].decode("ascii") if te_a >= 0 else "",
        cs[ce_a:ce_b].decode("ascii") if ce_a >= 0 else "",
        head_end + 4 - p,
    )
