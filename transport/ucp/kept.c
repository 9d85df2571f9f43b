/* Messages of declared peers that arrived before the declaration: see
 * kept.h. */
#include "transport/ucp/kept.h"

#include <stdlib.h>

void tp_kept_init(tp_kept_t *k)
{
    k->head = NULL;
    k->tail = &k->head;
}

tp_kept_msg_t *tp_kept_alloc(uint64_t tag, size_t len)
{
    tp_kept_msg_t *m = malloc(sizeof(*m) + len);
    if (m != NULL) {
        m->next = NULL;
        m->tag = tag;
        m->len = len;
        m->state = 0;
        m->status = 0;
    }
    return m;
}

void tp_kept_push(tp_kept_t *k, tp_kept_msg_t *m)
{
    m->next = NULL;
    *k->tail = m;
    k->tail = &m->next;
}

/* The link that points at the first matching message, or NULL. */
static tp_kept_msg_t **kept_link(tp_kept_t *k, uint64_t tag, uint64_t mask)
{
    for (tp_kept_msg_t **p = &k->head; *p != NULL; p = &(*p)->next)
        if (((*p)->tag & mask) == (tag & mask))
            return p;
    return NULL;
}

const tp_kept_msg_t *tp_kept_find(const tp_kept_t *k, uint64_t tag,
                                  uint64_t mask)
{
    tp_kept_msg_t **p = kept_link((tp_kept_t *)k, tag, mask);
    return p != NULL ? *p : NULL;
}

tp_kept_msg_t *tp_kept_take(tp_kept_t *k, uint64_t tag, uint64_t mask)
{
    tp_kept_msg_t **p = kept_link(k, tag, mask);
    if (p == NULL)
        return NULL;
    tp_kept_msg_t *m = *p;
    *p = m->next;
    if (k->tail == &m->next)
        k->tail = p;
    m->next = NULL;
    return m;
}

void tp_kept_free_state(tp_kept_t *k, int state)
{
    tp_kept_msg_t **p = &k->head;
    while (*p != NULL) {
        tp_kept_msg_t *m = *p;
        if (m->state != state) {
            p = &m->next;
            continue;
        }
        *p = m->next;
        free(m);
    }
    k->tail = p; /* the last kept message's next, or head */
}

void tp_kept_free_all(tp_kept_t *k)
{
    while (k->head != NULL) {
        tp_kept_msg_t *m = k->head;
        k->head = m->next;
        free(m);
    }
    tp_kept_init(k);
}
