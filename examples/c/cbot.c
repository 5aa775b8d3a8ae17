/* cbot.c: the first legal option, over the line protocol. Build: gcc -O2 -static -s -o cbot cbot.c */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char line[1 << 20];

/* The text after "key": in the line, or NULL. */
static const char *after(const char *key) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":", key);
    const char *at = strstr(line, pattern);
    return at ? at + strlen(pattern) : NULL;
}

/* Copies the n-th (from 0) string of the JSON list at p into out. */
static int nth_string(const char *p, int n, char *out, size_t size) {
    for (int i = 0; p && *p && *p != ']'; i++) {
        const char *start = strchr(p, '"');
        if (!start) return 0;
        const char *end = strchr(start + 1, '"');
        if (!end) return 0;
        if (i == n) {
            size_t len = (size_t)(end - start - 1);
            if (len >= size) return 0;
            memcpy(out, start + 1, len);
            out[len] = '\0';
            return 1;
        }
        p = end + 1;
        if (*p == ',') p++;
    }
    return 0;
}

int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        if (!strstr(line, "\"type\":\"request\"")) continue;
        long id = strtol(after("id"), NULL, 10);
        const char *kind = after("kind");
        if (strncmp(kind, "\"play\"", 6) == 0) {
            char card[8], discard[8];
            int x, y;
            nth_string(after("hand") + 1, 0, card, sizeof card);
            nth_string(after("hand") + 1, 1, discard, sizeof discard);
            sscanf(after("legal_cells"), "[[%d,%d]", &x, &y);
            if (strncmp(after("discard_required"), "true", 4) == 0)
                printf("{\"id\":%ld,\"play\":\"%s\",\"cell\":[%d,%d],\"discard\":\"%s\"}\n",
                       id, card, x, y, discard);
            else
                printf("{\"id\":%ld,\"play\":\"%s\",\"cell\":[%d,%d]}\n", id, card, x, y);
        } else {
            const char *source = after("legal_sources") + 1;
            if (*source == '"')
                printf("{\"id\":%ld,\"draw\":\"deck\"}\n", id);
            else
                printf("{\"id\":%ld,\"draw\":%ld}\n", id, strtol(source, NULL, 10));
        }
        fflush(stdout);
    }
    return 0;
}
