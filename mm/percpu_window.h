/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The this_cpu window's side of percpu chunk management: included by
 * mm/percpu-internal.h, after struct pcpu_chunk.
 */
#ifndef _MM_PERCPU_WINDOW_H
#define _MM_PERCPU_WINDOW_H

#ifdef CONFIG_THIS_CPU_WINDOW
/* mm/percpu_window.c; callers hold pcpu_alloc_mutex, but for _prepare(). */
bool __init pcpu_window_prepare(void);
void __init pcpu_window_init(void);
int pcpu_window_map(unsigned int cpu, struct pcpu_chunk *chunk,
		    int page_start, int page_end, struct page **pages);
void pcpu_window_unmap(unsigned int cpu, struct pcpu_chunk *chunk,
		       int page_start, int page_end);
void pcpu_window_flush(struct pcpu_chunk *chunk, int page_start, int page_end);
#else
static inline int pcpu_window_map(unsigned int cpu, struct pcpu_chunk *chunk,
				  int page_start, int page_end,
				  struct page **pages)
{
	return 0;
}

static inline void pcpu_window_unmap(unsigned int cpu, struct pcpu_chunk *chunk,
				     int page_start, int page_end)
{
}

static inline void pcpu_window_flush(struct pcpu_chunk *chunk, int page_start,
				     int page_end)
{
}
#endif

#endif /* _MM_PERCPU_WINDOW_H */
