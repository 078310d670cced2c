/**
 * A WorkflowStore kept in a Map, for testing the workflows layer without a real backend. Records are
 * copied in and out so a test cannot pass by mutating an object the store still holds.
 */
import type { WorkflowRecord, WorkflowStore } from "../../src/storage/protocol.js";

export class MemoryWorkflowStore implements WorkflowStore {
  private readonly records = new Map<string, WorkflowRecord>();
  /** Every save, in order; lets tests see exactly what the library stored. */
  readonly saved: WorkflowRecord[] = [];

  async save(record: WorkflowRecord): Promise<void> {
    this.records.set(record.name, structuredClone(record));
    this.saved.push(structuredClone(record));
  }

  async get(name: string): Promise<WorkflowRecord | null> {
    const r = this.records.get(name);
    return r ? structuredClone(r) : null;
  }

  async list(): Promise<WorkflowRecord[]> {
    return [...this.records.values()].map((r) => structuredClone(r));
  }

  async delete(name: string): Promise<boolean> {
    return this.records.delete(name);
  }
}
