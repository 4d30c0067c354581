"""Formats of other tools: MSCCL XML algorithms in and out, Chakra execution traces, SST Merlin and BookSim
network files.  Readers produce plans (:class:`~topocast.plans.schedule.Schedule`), writers take plans and
topologies; nothing below this package knows a format exists."""
