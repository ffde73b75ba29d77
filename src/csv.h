/* csv — one record of the comma-separated tables ddpsim reads (public measurement CSVs:
 * `allreduce --compare`, `validate`).  RFC 4180 quoting: a field may be quoted, "" is a quote
 * inside quotes; records do not span lines in the files read. */
#ifndef DDP_CSV_H
#define DDP_CSV_H

#include <glib.h>

GPtrArray *ddp_csv_split(const char *line);

#endif
