/**
 * Kernel Lab's bridge: lets the kernel replace the text of a notebook cell.
 *
 * The kernel opens a comm to the `kernel_lab` target; the open message's data,
 * and every later message on that comm, is one request, answered on the same
 * comm. Nothing here executes code.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Kernel, KernelMessage } from '@jupyterlab/services';
import { JSONObject } from '@lumino/coreutils';

declare function require(path: string): { version: string };
const VERSION = require('../package.json').version;

/** The comm target the kernel opens comms to. */
const TARGET = 'kernel_lab';

/** Answer one request for the notebook `panel`. */
function handle(panel: NotebookPanel, request: JSONObject): JSONObject {
  switch (request.action) {
    case 'hello':
      return { ok: true, extension: VERSION };
    case 'set_cell':
      return setCell(panel, request);
    default:
      return {
        ok: false,
        error: `unknown action ${JSON.stringify(request.action ?? null)}`
      };
  }
}

/** Replace the text of the cell `cell_id` unless it no longer reads `expect`. */
function setCell(panel: NotebookPanel, request: JSONObject): JSONObject {
  const { cell_id, source, expect } = request;
  if (typeof cell_id !== 'string' || typeof source !== 'string') {
    return { ok: false, error: 'set_cell needs a string cell_id and source' };
  }
  const cells = panel.content.model?.cells;
  const cell = cells ? Array.from(cells).find(c => c.id === cell_id) : null;
  if (!cell) {
    return {
      ok: false,
      error: `no cell with id ${cell_id} in ${panel.context.path}`
    };
  }
  const shared = cell.sharedModel;
  if (typeof expect === 'string' && shared.getSource() !== expect) {
    const error = 'the cell was edited since the kernel read it; left unchanged';
    return { ok: false, error };
  }
  // Through the shared model: one undoable step, and the notebook turns dirty.
  shared.setSource(source);
  return { ok: true };
}

/** Serve the `kernel_lab` comms that `kernel` opens for `panel`. */
function register(panel: NotebookPanel, kernel: Kernel.IKernelConnection) {
  kernel.registerCommTarget(
    TARGET,
    (comm: Kernel.IComm, open: KernelMessage.ICommOpenMsg) => {
      // Several notebooks may share a kernel: answer only our own requests.
      const session = (open.parent_header as Partial<KernelMessage.IHeader>)
        .session;
      if (session && session !== kernel.clientId) {
        return;
      }
      const answer = (data: JSONObject) => {
        comm.send(handle(panel, data));
      };
      comm.onMsg = msg => answer(msg.content.data);
      answer(open.content.data);
    }
  );
}

/** Keep the target registered on whatever kernel `panel` is using. */
function watch(panel: NotebookPanel): void {
  const context = panel.sessionContext;
  const kernel = context.session?.kernel;
  if (kernel) {
    register(panel, kernel);
  }
  context.kernelChanged.connect((_, change) => {
    if (change.newValue) {
      register(panel, change.newValue);
    }
  });
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'kernel-lab:cell-bridge',
  description: 'Lets the kernel replace the text of a notebook cell.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    tracker.forEach(watch);
    tracker.widgetAdded.connect((_, panel) => watch(panel));
  }
};

export default plugin;
