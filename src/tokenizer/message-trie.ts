/**
 * The chat messages of recent conversations as a tree with their segment ids: the node at depth
 * `i` is a conversation's message `i`, and conversations sharing their first messages (a system
 * prompt, the turns before a fork) share those nodes. A new turn walks the tree along its messages,
 * comparing each with the held one (a length check, then a string comparison, which V8 does as a
 * native memory comparison): a conversation's earlier messages are found without hashing their
 * text, and the walk is exact, never a hash match. Least recently used messages go first, leaves
 * only, within a byte budget: a message's text costs 2 bytes per code unit, its ids 4 bytes each.
 */
import type { MessageText } from "./chat.ts";

/** A held message: its role, text and segment ids, where it hangs, and what follows it. */
export interface MessageNode extends MessageText {
  readonly ids: Uint32Array;
  readonly parent: MessageNode | null;
  /** The messages that followed this one, by text length (a length is rarely shared, so lists stay short). */
  readonly children: Map<number, MessageNode[]>;
  /** False once evicted: a walk that found it before may still read its ids, but nothing hangs on it. */
  held: boolean;
}

function node(message: MessageText, ids: Uint32Array, parent: MessageNode | null): MessageNode {
  return { role: message.role, text: message.text, ids, parent, children: new Map(), held: true };
}

function nodeBytes(n: MessageNode): number {
  return n.text.length * 2 + n.ids.byteLength;
}

function child(parent: MessageNode, message: MessageText): MessageNode | undefined {
  return parent.children
    .get(message.text.length)
    ?.find((c) => c.role === message.role && c.text === message.text);
}

/** Recent conversations' messages and their segment ids, within a byte budget. */
export class MessageTrie {
  private readonly root = node({ role: "", text: "" }, new Uint32Array(0), null);
  /**
   * Held nodes, least recently used first. A path is touched from its deepest node up, so a
   * parent is always more recent than its children and the least recent node is a leaf.
   */
  private readonly recency = new Set<MessageNode>();
  private held = 0;

  constructor(private readonly budgetBytes: number) {}

  /** Bytes held now (texts and ids). */
  get bytes(): number {
    return this.held;
  }

  /** Messages held now. */
  get size(): number {
    return this.recency.size;
  }

  /** The held nodes of the longest held prefix of `messages`, message by message. */
  match(messages: readonly MessageText[]): MessageNode[] {
    const path: MessageNode[] = [];
    let at = this.root;
    for (const message of messages) {
      const next = child(at, message);
      if (!next) break;
      path.push(next);
      at = next;
    }
    return path;
  }

  /**
   * Hangs `messages` (with their segment ids `ids`) after `path`, the nodes `match` found for the
   * messages before them; a message already held there (another turn added it meanwhile) is
   * reused. Nothing is added when `path` lost a node to eviction meanwhile, or past a message
   * bigger than the budget. The whole path is then the most recently used.
   */
  extend(path: readonly MessageNode[], messages: readonly MessageText[], ids: readonly Uint32Array[]): void {
    let at = path.length === 0 ? this.root : path[path.length - 1]!;
    const added = [...path];
    for (let k = 0; k < messages.length && at.held; k++) {
      const next = child(at, messages[k]!) ?? this.add(at, messages[k]!, ids[k]!);
      if (!next) break;
      added.push(next);
      at = next;
    }
    this.touch(added);
    this.evict();
  }

  /** Marks `path`'s held nodes the most recently used. */
  private touch(path: readonly MessageNode[]): void {
    for (let i = path.length - 1; i >= 0; i--) {
      const n = path[i]!;
      if (!n.held) continue;
      this.recency.delete(n);
      this.recency.add(n);
    }
  }

  private add(parent: MessageNode, message: MessageText, ids: Uint32Array): MessageNode | null {
    const added = node(message, ids, parent);
    if (nodeBytes(added) > this.budgetBytes) return null;
    const siblings = parent.children.get(message.text.length);
    if (siblings) siblings.push(added);
    else parent.children.set(message.text.length, [added]);
    this.recency.add(added);
    this.held += nodeBytes(added);
    return added;
  }

  private evict(): void {
    for (const oldest of this.recency) {
      if (this.held <= this.budgetBytes) return;
      this.recency.delete(oldest);
      this.held -= nodeBytes(oldest);
      oldest.held = false;
      const siblings = oldest.parent!.children;
      const list = siblings.get(oldest.text.length)!;
      if (list.length === 1) siblings.delete(oldest.text.length);
      else list.splice(list.indexOf(oldest), 1);
    }
  }
}
