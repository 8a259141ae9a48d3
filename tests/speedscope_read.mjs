// speedscope_read.mjs PROFILE PNG [PROFILE PNG...]: load each PROFILE into
// speedscope (the npm package in tests/tools, installed by make deps) in
// headless Chromium, save a screenshot of its first view (time order) to
// PNG, then print as JSON what speedscope parsed, one entry per PROFILE:
// every profile it made (one per thread or track, in its own order, with
// the total it shows in its profile list) and the frames of each one's
// sandwich view (name, total and self as speedscope prints them).
//
// The page and the profiles are served from 127.0.0.1 on a port the kernel
// picks: speedscope fetches #profileURL, and Chromium does not fetch file://.
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const tools = path.join(path.dirname(new URL(import.meta.url).pathname), 'tools');
const { chromium } = require(path.join(tools, 'node_modules', 'playwright-core'));
const page_dir = path.join(tools, 'node_modules', 'speedscope', 'dist', 'release');

const argv = process.argv.slice(2);
if (!argv.length || argv.length % 2) {
	console.error('usage: speedscope_read.mjs PROFILE PNG [PROFILE PNG...]');
	process.exit(2);
}

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm' };
const server = http.createServer((req, res) => {
	const url = decodeURIComponent(req.url.split('?')[0]);
	// the profiles by number and speedscope's own files: never a path
	// out of them
	const m = url.match(/^\/profile\/(\d+)$/);
	const file = m ? argv[2 * Number(m[1])] : path.join(page_dir, path.basename(url));
	fs.readFile(file || '', (err, data) => {
		if (err) { res.writeHead(404); res.end(); return; }
		res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
		res.end(data);
	});
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const base = `http://127.0.0.1:${server.address().port}`;

// The rows of the table whose header row is HEAD (speedscope's profile
// list, its sandwich view), as arrays of cell texts, percentages cut.
function rows(page, head) {
	return page.evaluate((head) => {
		const tables = [...document.querySelectorAll('table')];
		for (let i = 0; i < tables.length; i++) {
			const th = [...tables[i].querySelectorAll('th')].map((c) => c.textContent.trim());
			if (th.join('|') !== head)
				continue;
			// the sandwich view scrolls its rows in a table of their own
			const body = tables[i].querySelector('td') || !tables[i + 1] ? tables[i] : tables[i + 1];
			return [...body.querySelectorAll('tr')].map((tr) =>
				[...tr.querySelectorAll('td')].map((c) => c.textContent.replace(/\s*\([^()]*%\)$/, '')))
				.filter((r) => r.length);
		}
		return null;
	}, head);
}

const shown = (page) => page.evaluate(() => (document.body.innerText.match(/\((\d+)\/\d+\)/) || [])[1]);

async function read(page, n, png) {
	const errors = [];
	page.on('pageerror', (e) => errors.push(String(e)));
	await page.setViewportSize({ width: 1280, height: 800 });
	await page.goto(`${base}/index.html#profileURL=${encodeURIComponent(`${base}/profile/${n}`)}`);
	// loaded: the title names the file, and a flame chart is drawn
	await page.waitForFunction(() => document.title.endsWith(' - speedscope') && document.querySelector('canvas'),
		null, { timeout: 60000 });
	await page.waitForTimeout(300);
	await page.screenshot({ path: png });
	// sandwich: a table of every frame, on a page tall enough that no
	// row is scrolled out
	await page.setViewportSize({ width: 1280, height: 1600 });
	await page.keyboard.press('3');
	await page.waitForFunction(() => [...document.querySelectorAll('th')].some((c) => c.textContent.trim() === 'Symbol Name'),
		null, { timeout: 10000 });
	const list = (await rows(page, '#|Name|Total Weight')) || [];
	const profiles = [];
	for (let i = 0; i < Math.max(list.length, 1); i++) {
		if (i) {
			await page.keyboard.press('n');
			// shown: its number and its name in the toolbar, and a sandwich
			// table that is no longer the previous profile's
			await page.waitForFunction(([want, name]) => {
				const m = document.body.innerText.match(/^(.*) \((\d+)\/\d+\)$/m);
				return m && m[2] === want && m[1] === name;
			}, [String(i + 1), list[i][1]], { timeout: 10000 });
		}
		await page.waitForTimeout(100);
		const frames = (await rows(page, 'Total|Self|Symbol Name')) || [];
		profiles.push({
			name: list.length ? list[i][1] : '', total: list.length ? list[i][2] : '',
			frames: frames.map((r) => ({ name: r[2], total: r[0], self: r[1] })),
		});
	}
	if (list.length && await shown(page) !== String(list.length))
		throw new Error('speedscope did not step through its profiles');
	return { title: await page.title(), errors, profiles };
}

// The flags this machine needs: no sandbox as root, and no background
// connections (the closed network refuses them).
const profile_dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tpp-chromium-'));
let status = 0;
let browser;
try {
	browser = await chromium.launchPersistentContext(profile_dir, {
		executablePath: '/usr/bin/chromium', headless: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
			'--disable-component-update', '--disable-sync'],
	});
	const out = [];
	for (let n = 0; 2 * n < argv.length; n++)
		out.push(await read(await browser.newPage(), n, argv[2 * n + 1]));
	console.log(JSON.stringify(out, null, 1));
} catch (e) {
	console.error('speedscope_read: ' + e.message.split('\n')[0]);
	status = 1;
} finally {
	if (browser)
		await browser.close();
	server.close();
	fs.rmSync(profile_dir, { recursive: true, force: true });
}
process.exit(status);
