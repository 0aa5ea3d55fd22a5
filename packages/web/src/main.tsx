import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { readBootConfig } from './boot-config';
import { RouterProvider } from './router';
import './styles.css';

const boot = readBootConfig(window.__TRELLIS__);
const root = document.getElementById('root');
if (root)
  createRoot(root).render(
    <StrictMode>
      <RouterProvider basePath={boot.basePath}>
        <App boot={boot} />
      </RouterProvider>
    </StrictMode>,
  );
