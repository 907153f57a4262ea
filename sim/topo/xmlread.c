/* SPDX-License-Identifier: MIT
 *
 * xmlread.c - libxml2 parsing with the first error kept (see xmlread.h).
 */
#include "xmlread.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include <libxml/parser.h>

typedef struct first_err {
    int set, line;
    char msg[256];
} first_err;

/* libxml2 calls this for every error of this parser context only. */
static void keep_first(void *ud, xmlErrorPtr e)
{
    xmlParserCtxtPtr pc = ud;
    first_err *f = pc ? pc->_private : NULL;
    if (f == NULL || f->set || e == NULL)
        return;
    f->set = 1;
    f->line = e->line;
    snprintf(f->msg, sizeof f->msg, "%s", e->message ? e->message : "?");
    f->msg[strcspn(f->msg, "\n")] = '\0';
}

int nsim__xml_read(const char *text, size_t len, const char *src,
                   xmlDocPtr *doc, nsim_err *err)
{
    first_err f = {0, 0, "not well-formed XML"};
    if (len > (size_t)INT_MAX)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s: file too large", src);
    xmlParserCtxtPtr pc = xmlNewParserCtxt();
    if (pc == NULL)
        return NSIM_ERR(err, NSIM_ENOMEM, "out of memory");
    pc->_private = &f;
    pc->sax->serror = keep_first;
    *doc = xmlCtxtReadMemory(pc, text, (int)len, src, NULL,
                             XML_PARSE_NONET | XML_PARSE_NOERROR |
                                 XML_PARSE_NOWARNING);
    if (*doc == NULL && !f.set) {
        xmlErrorPtr e = xmlCtxtGetLastError(pc);
        if (e != NULL)
            keep_first(pc, e);
    }
    xmlFreeParserCtxt(pc);
    if (*doc == NULL)
        return NSIM_ERR(err, NSIM_ECONFIG, "%s:%d: malformed XML: %s", src,
                        f.line, f.msg);
    return NSIM_OK;
}

int nsim__xml_is(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE &&
           strcmp((const char *)n->name, name) == 0;
}

int nsim__xml_attr(const xmlNode *n, const char *k, char *buf, size_t len)
{
    xmlChar *v = xmlGetProp(n, (const xmlChar *)k);
    if (v == NULL)
        return 0;
    snprintf(buf, len, "%s", (const char *)v);
    xmlFree(v);
    return 1;
}
