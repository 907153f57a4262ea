/* SPDX-License-Identifier: MIT
 *
 * xmlread.h - internal to sim/topo: parses XML text with libxml2 for the
 * NCCL topology and graph readers, reporting the FIRST error with its line
 * (libxml2 keeps only the last one, which after a tag mismatch is a less
 * helpful "premature end of data"). No network, no entity expansion.
 */
#ifndef NSIM_TOPO_XMLREAD_H
#define NSIM_TOPO_XMLREAD_H

#include <stddef.h>

#include <libxml/tree.h>

#include "../core/err.h"

/* *doc is the caller's (xmlFreeDoc). Errors read "SRC:LINE: malformed
 * XML: what". */
NSIM_NODISCARD int nsim__xml_read(const char *text, size_t len,
                                  const char *src, xmlDocPtr *doc,
                                  nsim_err *err);

/* n is an element named name. */
int nsim__xml_is(const xmlNode *n, const char *name);
/* Copies attribute k of n into buf (truncated to len); 0 when absent. */
int nsim__xml_attr(const xmlNode *n, const char *k, char *buf, size_t len);

#endif
